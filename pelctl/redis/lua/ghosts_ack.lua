-- pelctl ghosts --fix (explicit ids, or servers before 7.0): acknowledge PEL entries proven
-- to have no stream entry any more. Stream ids only grow, so an id missing from the stream
-- can never come back: acknowledging it loses nothing. Each entry runs isolated (each()).
--
-- KEYS[1] stream
-- ARGV: group, then 1 per entry: id
-- Reply per entry: ghost '' | skip present | skip not-pending | fail <error>
local stream, group = KEYS[1], ARGV[1]

local function ghost_one(i)
  local id = ARGV[i]
  if not redis.call('XPENDING', stream, group, id, id, 1)[1] then
    return 'skip', 'not-pending'
  end
  if redis.call('XRANGE', stream, id, id)[1] then return 'skip', 'present' end
  redis.call('XACK', stream, group, id)
  return 'ghost', ''
end

return run_entries(ghost_one, 2, 1)
