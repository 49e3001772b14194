-- pelctl requeue: per entry, in one atomic script: verify, take it (XCLAIM with min-idle to
-- pelctl's own consumer), XADD the same fields plus the lineage fields (<prefix>retry_count,
-- <prefix>prior_deliveries, <prefix>original_id; none with lineage '0': --no-lineage), and
-- only then XACK the old id. There is no moment at which the
-- entry is acknowledged but not re-added. Entries past max retries go to the dead-letter
-- stream instead (inline when it shares the script, otherwise left for the ordered path).
--
-- An entry whose copy is too wide for one script (UNPACK_MAX, see the prelude) is answered
-- 'wide' before anything is written for it: the client moves it by the ordered path.
-- Each entry runs isolated (each()): an error in one is its 'fail', the batch goes on.
--
-- KEYS[1] stream, KEYS[2] dead-letter stream (the stream itself when unused), KEYS[3..] locks
-- ARGV: group, claimer, prefix, max_retries (-1: none), dlq_mode (none|inline|defer),
--       reason, lineage (1|0), then 5 per entry (see the prelude)
-- Reply per entry: later '' (the call's byte budget was spent: send it again) |
--                  requeued <new id> | dlq <dlq id> | ghost '' | defer '' |
--                  wide <XADD values needed> | skip <reason> | fail <error>
local stream, dlq = KEYS[1], KEYS[2]
local group, claimer, prefix = ARGV[1], ARGV[2], ARGV[3]
local max_retries, dlq_mode, reason = tonumber(ARGV[4]), ARGV[5], ARGV[6]
local lineage = ARGV[7] == '1'
local out, claimed, now = {}, false, nil

local function requeue_one(i)
  if budget_spent() then return 'later', '' end
  local id, min_idle = ARGV[i], tonumber(ARGV[i + 3])
  local why, e = pel_verify(stream, group, id, ARGV[i + 1], tonumber(ARGV[i + 2]), min_idle)
  if why then return 'skip', why end
  if lock_held(tonumber(ARGV[i + 4])) then return 'skip', 'alive' end
  local fields = entry_fields(stream, id)
  if fields then spend(fields) end
  if not fields then
    -- The stream entry was deleted or trimmed: nothing to re-add; clear the reference.
    redis.call('XACK', stream, group, id)
    return 'ghost', ''
  end
  local args = {stream, '*'}  -- the XADD's arguments: key, '*', the copy
  local retries = requeue_copy(args, fields, prefix, id, e[4], lineage)
  local to_dlq = max_retries >= 0 and retries + 1 > max_retries
  if to_dlq then
    if dlq_mode == 'defer' then return 'defer', '' end
    if dlq_mode ~= 'inline' then return 'skip', 'max-retries' end
    now = now or server_ms()
    args = {dlq, '*'}
    add_envelope(args, fields, prefix, stream, group, id, e, retry_reason(reason, max_retries),
                 now)
  end
  if not fits(args) then return 'wide', tostring(#args) end
  local taken = redis.call('XCLAIM', stream, group, claimer, min_idle, id, 'JUSTID')
  claimed = true
  if #taken == 0 then
    -- Only a deleted entry can fail here (verify saw it pending and idle enough).
    redis.call('XACK', stream, group, id)
    return 'ghost', ''
  end
  hold(stream, group, id, e)
  local added = xadd(args)
  if type(added) == 'table' and added.err then
    put_back(stream, group, id, e)
    held_id = nil
    return 'fail', added.err
  end
  -- XACK of an entry this script holds, in a group that exists: it cannot fail.
  redis.call('XACK', stream, group, id)
  held_id = nil
  if to_dlq then return 'dlq', added end
  return 'requeued', added
end

if #ARGV >= 8 then can_ack(stream, group) end
for i = 8, #ARGV, 5 do
  local status, detail = each(requeue_one, i)
  out[#out + 1] = status
  out[#out + 1] = detail
end

if claimed then release_consumer(stream, group, claimer) end
return out
