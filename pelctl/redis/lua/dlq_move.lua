-- pelctl dlq move, when the stream and the dead-letter stream share a slot: per entry, in
-- one atomic script: verify, take it (XCLAIM with min-idle to pelctl's own consumer), XADD
-- the envelope (SPEC 5a) to the dead-letter stream, then XACK the old id.
--
-- An entry whose envelope is too wide for one script (UNPACK_MAX, see the prelude) is
-- answered 'wide' before anything is written for it: the client moves it by the ordered
-- path. Each entry runs isolated (each()): an error in one is its 'fail', the batch goes on.
--
-- KEYS[1] stream, KEYS[2] dead-letter stream, KEYS[3..] lock keys
-- ARGV: group, claimer, prefix, reason, then 5 per entry (see the prelude)
-- Reply per entry: later '' (the call's byte budget was spent: send it again) |
--                  dlq <dlq id> | ghost '' | wide <XADD values needed> | skip <reason> |
--                  fail <error>
local stream, dlq = KEYS[1], KEYS[2]
local group, claimer, prefix, reason = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local out, claimed, now = {}, false, nil

local function move_one(i)
  if budget_spent() then return 'later', '' end
  local id, min_idle = ARGV[i], tonumber(ARGV[i + 3])
  local why, e = pel_verify(stream, group, id, ARGV[i + 1], tonumber(ARGV[i + 2]), min_idle)
  if why then return 'skip', why end
  if lock_held(tonumber(ARGV[i + 4])) then return 'skip', 'alive' end
  local fields = entry_fields(stream, id)
  if fields then spend(fields) end
  if not fields then
    redis.call('XACK', stream, group, id)
    return 'ghost', ''
  end
  now = now or server_ms()
  local args = {dlq, '*'}  -- the XADD's arguments: key, '*', the dead letter
  add_envelope(args, fields, prefix, stream, group, id, e, reason, now)
  if not fits(args) then return 'wide', tostring(#args) end
  local taken = redis.call('XCLAIM', stream, group, claimer, min_idle, id, 'JUSTID')
  claimed = true
  if #taken == 0 then
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
  return 'dlq', added
end

if #ARGV >= 5 then can_ack(stream, group) end
for i = 5, #ARGV, 5 do
  local status, detail = each(move_one, i)
  out[#out + 1] = status
  out[#out + 1] = detail
end

if claimed then release_consumer(stream, group, claimer) end
return out
