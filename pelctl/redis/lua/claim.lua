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
local out = {}

local function claim_one(i)
  local id, min_idle = ARGV[i], tonumber(ARGV[i + 3])
  local why, e = pel_verify(stream, group, id, ARGV[i + 1], tonumber(ARGV[i + 2]), min_idle)
  if why then return 'skip', why end
  if e[2] == target then return 'skip', 'already-owned' end
  if lock_held(tonumber(ARGV[i + 4])) then return 'skip', 'alive' end
  local taken = redis.call('XCLAIM', stream, group, target, min_idle, id, 'JUSTID')
  if #taken == 0 then
    return 'ghost', ''  -- deleted from the stream: XCLAIM (7.0+) dropped the reference
  end
  return 'claimed', ''
end

for i = 3, #ARGV, 5 do
  local status, detail = each(claim_one, i)
  out[#out + 1] = status
  out[#out + 1] = detail
end
return out
