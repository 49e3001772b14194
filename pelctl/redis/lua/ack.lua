-- pelctl ack: per entry, verify it against the plan, then XACK it. Each entry runs isolated
-- (each()): an error in one is its 'fail', the batch goes on.
--
-- KEYS[1] stream, KEYS[2..] lock keys
-- ARGV: group, then 5 per entry (see the prelude)
-- Reply per entry: acked '' | skip <reason> | fail <error>
local stream, group = KEYS[1], ARGV[1]
local out = {}

local function ack_one(i)
  local id = ARGV[i]
  local why = pel_verify(stream, group, id, ARGV[i + 1], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]))
  if why then return 'skip', why end
  if lock_held(tonumber(ARGV[i + 4])) then return 'skip', 'alive' end
  redis.call('XACK', stream, group, id)
  return 'acked', ''
end

for i = 2, #ARGV, 5 do
  local status, detail = each(ack_one, i)
  out[#out + 1] = status
  out[#out + 1] = detail
end
return out
