-- pelctl claim: per entry, verify it against the plan, then XCLAIM it to the target consumer
-- with min-idle and JUSTID (the delivery count is left for the consumer's own read to
-- increment). An entry re-delivered since the plan fails the checks and is skipped, never
-- taken from the consumer that just picked it up.
--
-- KEYS[1] stream, KEYS[2..] lock keys
-- ARGV: group, target consumer, then 5 per entry (see the prelude)
-- Reply per entry: claimed '' | ghost '' | skip <reason>
local stream, group, target = KEYS[1], ARGV[1], ARGV[2]
local out = {}
for i = 3, #ARGV, 5 do
  local id, min_idle = ARGV[i], tonumber(ARGV[i + 3])
  local status, detail = 'skip', ''
  local why, e = pel_verify(stream, group, id, ARGV[i + 1], tonumber(ARGV[i + 2]), min_idle)
  if why then
    detail = why
  elseif e[2] == target then
    detail = 'already-owned'
  elseif lock_held(tonumber(ARGV[i + 4])) then
    detail = 'alive'
  else
    local taken = redis.call('XCLAIM', stream, group, target, min_idle, id, 'JUSTID')
    if #taken == 0 then
      status = 'ghost'  -- deleted from the stream: XCLAIM (7.0+) dropped the reference
    else
      status = 'claimed'
    end
  end
  out[#out + 1] = status
  out[#out + 1] = detail
end
return out
