-- pelctl dlq move, when the stream and the dead-letter stream share a slot: per entry, in
-- one atomic script: verify, take it (XCLAIM with min-idle to pelctl's own consumer), XADD
-- the envelope (SPEC 5a) to the dead-letter stream, then XACK the old id.
--
-- KEYS[1] stream, KEYS[2] dead-letter stream, KEYS[3..] lock keys
-- ARGV: group, claimer, prefix, reason, then 5 per entry (see the prelude)
-- Reply per entry: dlq <dlq id> | ghost '' | skip <reason> | fail <error>
local stream, dlq = KEYS[1], KEYS[2]
local group, claimer, prefix, reason = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local out, claimed, now = {}, false, nil

for i = 5, #ARGV, 5 do
  local id, min_idle = ARGV[i], tonumber(ARGV[i + 3])
  local status, detail = 'skip', ''
  local why, e = pel_verify(stream, group, id, ARGV[i + 1], tonumber(ARGV[i + 2]), min_idle)
  if why then
    detail = why
  elseif lock_held(tonumber(ARGV[i + 4])) then
    detail = 'alive'
  else
    local fields = entry_fields(stream, id)
    local taken = nil
    if fields then
      taken = redis.call('XCLAIM', stream, group, claimer, min_idle, id, 'JUSTID')
      claimed = true
    end
    if not fields or #taken == 0 then
      redis.call('XACK', stream, group, id)
      status = 'ghost'
    else
      now = now or server_ms()
      local added = redis.pcall('XADD', dlq, '*',
        unpack(add_envelope(fields, prefix, stream, group, id, e, reason, now)))
      local err = error_text(added)
      if err then
        put_back(stream, group, id, e)
        status, detail = 'fail', err
      else
        redis.call('XACK', stream, group, id)
        status, detail = 'dlq', added
      end
    end
  end
  out[#out + 1] = status
  out[#out + 1] = detail
end

if claimed then release_consumer(stream, group, claimer) end
return out
