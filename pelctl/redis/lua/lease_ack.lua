-- pelctl's ordered path, step 3 of 3 (on the stream's node): acknowledge entries whose copy
-- is now written, unless something happened to them since the lease (acknowledged by
-- someone else, re-delivered, claimed away): then the copy is a duplicate and the entry is
-- left alone.
--
-- KEYS[1] stream
-- ARGV: group, then 3 per entry: id, owner, deliveries (as leased)
-- Reply per entry: acked '' | skip duplicate | fail <error>
local stream, group = KEYS[1], ARGV[1]

local function ack_one(i)
  local id = ARGV[i]
  local e = redis.call('XPENDING', stream, group, id, id, 1)[1]
  if e and e[2] == ARGV[i + 1] and e[4] == tonumber(ARGV[i + 2]) then
    redis.call('XACK', stream, group, id)
    return 'acked', ''
  end
  return 'skip', 'duplicate'
end

return run_entries(ack_one, 2, 3)
