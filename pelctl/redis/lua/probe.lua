-- pelctl plans (read-only): for each entry, does its stream entry still exist, how many
-- times was it requeued already (<prefix>retry_count), and is its lock key held.
--
-- KEYS[1] stream, KEYS[2..] lock keys
-- ARGV: prefix, then 2 per entry: id, lock key index (0: none)
-- Reply per entry: exists (0|1), retry count, lock held (0|1)
local stream, RETRY = KEYS[1], ARGV[1] .. 'retry_count'
local out = {}
if #ARGV >= 3 then ahead_last = ARGV[#ARGV - 1] end  -- (the last id: read ahead up to it)
for i = 2, #ARGV, 2 do
  local fields = entry_fields(stream, ARGV[i])
  local retries = 0
  if fields then
    for j = 1, #fields, 2 do
      if fields[j] == RETRY then retries = count(fields[j + 1]) end
    end
  end
  out[#out + 1] = fields and 1 or 0
  out[#out + 1] = retries
  out[#out + 1] = lock_held(tonumber(ARGV[i + 1])) and 1 or 0
end
return out
