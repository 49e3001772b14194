-- pelctl ghosts --fix (explicit ids, or servers before 7.0): acknowledge PEL entries proven
-- to have no stream entry any more. Stream ids only grow, so an id missing from the stream
-- can never come back: acknowledging it loses nothing.
--
-- KEYS[1] stream
-- ARGV: group, then 1 per entry: id
-- Reply per entry: ghost '' | skip present | skip not-pending
local stream, group = KEYS[1], ARGV[1]
local out = {}
for i = 2, #ARGV do
  local id = ARGV[i]
  if not redis.call('XPENDING', stream, group, id, id, 1)[1] then
    out[#out + 1] = 'skip'
    out[#out + 1] = 'not-pending'
  elseif redis.call('XRANGE', stream, id, id)[1] then
    out[#out + 1] = 'skip'
    out[#out + 1] = 'present'
  else
    redis.call('XACK', stream, group, id)
    out[#out + 1] = 'ghost'
    out[#out + 1] = ''
  end
end
return out
