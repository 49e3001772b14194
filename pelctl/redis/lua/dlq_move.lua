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
local claimed, now = false, nil

local function move_one(i)
  local id, min_idle, e, fields = verify_copy(stream, group, i)
  if not id then return min_idle, e end
  now = now or server_ms()
  local args = {dlq, '*'}  -- the XADD's arguments: key, '*', the dead letter
  add_envelope(args, fields, prefix, stream, group, id, e, reason, now)
  if not fits(args) then return 'wide', tostring(#args) end
  claimed = true
  local status, detail = take_and_copy(stream, group, claimer, id, min_idle, e, args)
  if status == 'copied' then return 'dlq', detail end
  return status, detail
end

if #ARGV >= 5 then can_ack(stream, group) end
local out = run_entries(move_one, 5, 5)
if claimed then release_consumer(stream, group, claimer) end
return out
