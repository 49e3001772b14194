-- pelctl dlq move across slots, step 3 of 3 (on the stream's node): acknowledge entries whose
-- envelope is now in the dead-letter stream, unless something happened to them meanwhile
-- (acknowledged by someone else, or re-delivered): then the dead-letter copy is a
-- duplicate and the entry is left alone.
--
-- KEYS[1] stream
-- ARGV: group, then 3 per entry: id, owner, deliveries
-- Reply per entry: dlq '' | skip dlq-duplicate
local stream, group = KEYS[1], ARGV[1]
local out = {}
for i = 2, #ARGV, 3 do
  local id = ARGV[i]
  local e = redis.call('XPENDING', stream, group, id, id, 1)[1]
  if e and e[2] == ARGV[i + 1] and e[4] == tonumber(ARGV[i + 2]) then
    redis.call('XACK', stream, group, id)
    out[#out + 1] = 'dlq'
    out[#out + 1] = ''
  else
    out[#out + 1] = 'skip'
    out[#out + 1] = 'dlq-duplicate'
  end
end
return out
