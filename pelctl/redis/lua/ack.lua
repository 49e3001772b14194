-- pelctl ack: per entry, verify it against the plan, then XACK it. Each entry runs isolated
-- (each()): an error in one is its 'fail', the batch goes on.
--
-- KEYS[1] stream, KEYS[2..] lock keys
-- ARGV: group, then 5 per entry (see the prelude)
-- Reply per entry: acked '' | skip <reason> | fail <error>
local stream, group = KEYS[1], ARGV[1]

local function ack_one(i)
  local id, status, detail = verify_entry(stream, group, i)
  if not id then return status, detail end
  redis.call('XACK', stream, group, id)
  return 'acked', ''
end

return run_entries(ack_one, 2, 5)
