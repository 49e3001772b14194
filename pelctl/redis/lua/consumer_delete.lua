-- pelctl consumers prune: delete one consumer, re-checking right before the delete that it
-- holds no pending entry (XGROUP DELCONSUMER would silently drop them) and is still
-- inactive (XINFO CONSUMERS idle: time since its last attempted interaction).
--
-- KEYS[1] stream
-- ARGV: group, consumer, min inactive ms
-- Reply: deleted '' | skip holds-entries | skip active | skip gone
local stream, group, name, min_quiet = KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3])
if #redis.call('XPENDING', stream, group, '-', '+', 1, name) > 0 then
  return {'skip', 'holds-entries'}
end
for _, row in ipairs(redis.call('XINFO', 'CONSUMERS', stream, group)) do
  local fields = {}
  for j = 1, #row, 2 do fields[row[j]] = row[j + 1] end
  if fields['name'] == name then
    if tonumber(fields['idle']) < min_quiet then return {'skip', 'active'} end
    redis.call('XGROUP', 'DELCONSUMER', stream, group, name)
    return {'deleted', ''}
  end
end
return {'skip', 'gone'}
