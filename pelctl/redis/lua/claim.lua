-- pelctl claim: per entry, verify it against the plan, then XCLAIM it to the target consumer
-- with min-idle and JUSTID (the delivery count is left for the consumer's own read to
-- increment). An entry re-delivered since the plan fails the checks and is skipped, never
-- taken from the consumer that just picked it up. Each entry runs isolated (each()): an
-- error in one is its 'fail', the batch goes on.
--
-- KEYS[1] stream, KEYS[2..] lock keys
-- ARGV: group, target consumer, then 5 per entry (see the prelude)
-- Reply per entry: claimed '' | ghost '' | skip <reason> | fail <error>
local stream, group, target = KEYS[1], ARGV[1], ARGV[2]

local function owned(e)
  if e[2] == target then return 'already-owned' end
  return nil
end

local function claim_one(i)
  local id, min_idle, detail = verify_entry(stream, group, i, owned)
  if not id then return min_idle, detail end
  local taken = redis.call('XCLAIM', stream, group, target, min_idle, id, 'JUSTID')
  if #taken == 0 then
    return 'ghost', ''  -- deleted from the stream: XCLAIM (7.0+) dropped the reference
  end
  return 'claimed', ''
end

return run_entries(claim_one, 3, 5)
