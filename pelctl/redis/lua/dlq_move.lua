-- pelctl dlq move, when the stream and the dead-letter stream share a slot: per entry, in
-- one atomic script: verify, XADD the envelope (docs/formats.md) to the dead-letter stream,
-- then XACK the old id (copy_then_ack: nothing runs between the three, so no take, and an
-- XADD that fails leaves the entry exactly as it was).
--
-- An entry whose envelope is too wide for one script (UNPACK_MAX, see the prelude) is
-- answered 'wide' before anything is written for it: the client moves it by the ordered
-- path. Each entry runs isolated (each()): an error in one is its 'fail', the batch goes on.
--
-- KEYS[1] stream, KEYS[2] dead-letter stream, KEYS[3..] lock keys
-- ARGV: group, prefix, reason, then 5 per entry (see the prelude)
-- Reply per entry: later '' (the call's byte budget was spent: send it again) |
--                  dlq <dlq id> | ghost '' | wide <XADD values needed> | skip <reason> |
--                  fail <error>
local stream, dlq = KEYS[1], KEYS[2]
local group, prefix, reason = ARGV[1], ARGV[2], ARGV[3]
local now = nil

local function move_one(i)
  local id, min_idle, e, fields = verify_copy(stream, group, i)
  if not id then return min_idle, e end
  now = now or server_ms()
  local args = {dlq, '*'}  -- the XADD's arguments: key, '*', the dead letter
  add_envelope(args, fields, prefix, stream, group, id, e, reason, now)
  if not fits(args) then return 'wide', tostring(#args) end
  local status, detail = copy_then_ack(stream, group, id, args)
  if status == 'copied' then return 'dlq', detail end
  return status, detail
end

if #ARGV >= 4 then can_ack(stream, group) end
return run_entries(move_one, 4, 5)
