-- pelctl requeue: per entry, in one atomic script: verify, take it (XCLAIM with min-idle to
-- pelctl's own consumer), XADD the same fields plus <prefix>retry_count and
-- <prefix>original_id, and only then XACK the old id. There is no moment at which the
-- entry is acknowledged but not re-added. Entries past max retries go to the dead-letter
-- stream instead (inline when it shares the script, otherwise left for the ordered path).
--
-- KEYS[1] stream, KEYS[2] dead-letter stream (the stream itself when unused), KEYS[3..] locks
-- ARGV: group, claimer, prefix, max_retries (-1: none), dlq_mode (none|inline|defer),
--       reason, then 5 per entry (see the prelude)
-- Reply per entry: requeued <new id> | dlq <dlq id> | ghost '' | defer '' |
--                  skip <reason> | fail <error>
local stream, dlq = KEYS[1], KEYS[2]
local group, claimer, prefix = ARGV[1], ARGV[2], ARGV[3]
local max_retries, dlq_mode, reason = tonumber(ARGV[4]), ARGV[5], ARGV[6]
local RETRY, ORIGINAL = prefix .. 'retry_count', prefix .. 'original_id'
local out, claimed, now = {}, false, nil

for i = 7, #ARGV, 5 do
  local id, min_idle = ARGV[i], tonumber(ARGV[i + 3])
  local status, detail = 'skip', ''
  local why, e = pel_verify(stream, group, id, ARGV[i + 1], tonumber(ARGV[i + 2]), min_idle)
  if why then
    detail = why
  elseif lock_held(tonumber(ARGV[i + 4])) then
    detail = 'alive'
  else
    local fields = entry_fields(stream, id)
    if not fields then
      -- The stream entry was deleted or trimmed: nothing to re-add; clear the reference.
      redis.call('XACK', stream, group, id)
      status = 'ghost'
    else
      local retries, original, kept = 0, id, {}
      for j = 1, #fields, 2 do
        local k = fields[j]
        if k == RETRY then
          retries = tonumber(fields[j + 1]) or 0
        elseif k == ORIGINAL then
          original = fields[j + 1]
        else
          kept[#kept + 1] = k
          kept[#kept + 1] = fields[j + 1]
        end
      end
      local to_dlq = max_retries >= 0 and retries + 1 > max_retries
      if to_dlq and dlq_mode ~= 'inline' then
        if dlq_mode == 'defer' then status = 'defer' else detail = 'max-retries' end
      else
        local taken = redis.call('XCLAIM', stream, group, claimer, min_idle, id, 'JUSTID')
        claimed = true
        if #taken == 0 then
          -- Only a deleted entry can fail here (verify saw it pending and idle enough).
          redis.call('XACK', stream, group, id)
          status = 'ghost'
        else
          local added
          if to_dlq then
            now = now or server_ms()
            local why_dlq = reason
            if why_dlq == '' then why_dlq = 'max retries exceeded (' .. max_retries .. ')' end
            added = redis.pcall('XADD', dlq, '*',
              unpack(add_envelope(fields, prefix, stream, group, id, e, why_dlq, now)))
          else
            kept[#kept + 1] = RETRY
            kept[#kept + 1] = tostring(retries + 1)
            kept[#kept + 1] = ORIGINAL
            kept[#kept + 1] = original
            added = redis.pcall('XADD', stream, '*', unpack(kept))
          end
          local err = error_text(added)
          if err then
            put_back(stream, group, id, e)
            status, detail = 'fail', err
          else
            redis.call('XACK', stream, group, id)
            if to_dlq then status = 'dlq' else status = 'requeued' end
            detail = added
          end
        end
      end
    end
  end
  out[#out + 1] = status
  out[#out + 1] = detail
end

if claimed then release_consumer(stream, group, claimer) end
return out
