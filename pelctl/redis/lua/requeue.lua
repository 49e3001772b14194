-- pelctl requeue: per entry, in one atomic script: verify it (still pending, same owner, not
-- re-delivered since the plan, idle at least its min-idle), XADD the same fields plus the
-- lineage fields (<prefix>retry_count, <prefix>prior_deliveries, <prefix>original_id; none
-- with lineage '0': --no-lineage), and only then XACK the old id (copy_then_ack). There is
-- no moment at which the entry is acknowledged but not re-added. Entries past max retries
-- go to the dead-letter stream instead (inline when it shares the script, otherwise left for
-- the ordered path).
--
-- No take: the verify and the change run in this one script, so an XCLAIM to a helper
-- consumer would re-check what verify_entry has just checked, at about a quarter of the
-- script's server time (the 7.0+ XCLAIM also looks the entry up in the stream again).
--
-- An entry whose copy is too wide for one script (UNPACK_MAX, see the prelude) is answered
-- 'wide' before anything is written for it: the client moves it by the ordered path.
-- Each entry runs isolated (each()): an error in one is its 'fail', the batch goes on.
--
-- KEYS[1] stream, KEYS[2] dead-letter stream (the stream itself when unused), KEYS[3..] locks
-- ARGV: group, prefix, max_retries (-1: none), dlq_mode (none|inline|defer), reason,
--       lineage (1|0), then 5 per entry (see the prelude)
-- Reply per entry: later '' (the call's byte budget was spent: send it again) |
--                  requeued <new id> | dlq <dlq id> | ghost '' | defer '' |
--                  wide <XADD values needed> | skip <reason> | fail <error>
local stream, dlq = KEYS[1], KEYS[2]
local group, prefix = ARGV[1], ARGV[2]
local max_retries, dlq_mode, reason = tonumber(ARGV[3]), ARGV[4], ARGV[5]
local lineage = ARGV[6] == '1'
local now = nil

local function requeue_one(i)
  local id, min_idle, e, fields = verify_copy(stream, group, i)
  if not id then return min_idle, e end  -- (its answer: status, detail)
  local args = {stream, '*'}  -- the XADD's arguments: key, '*', the copy
  local retries = requeue_copy(args, fields, prefix, id, e[4], lineage)
  local to_dlq = max_retries >= 0 and retries + 1 > max_retries
  if to_dlq then
    if dlq_mode == 'defer' then return 'defer', '' end
    if dlq_mode ~= 'inline' then return 'skip', 'max-retries' end
    now = now or server_ms()
    args = {dlq, '*'}
    add_envelope(args, fields, prefix, stream, group, id, e, retry_reason(reason, max_retries),
                 now)
  end
  if not fits(args) then return 'wide', tostring(#args) end
  local status, detail = copy_then_ack(stream, group, id, args)
  if status ~= 'copied' then return status, detail end
  if to_dlq then return 'dlq', detail end
  return 'requeued', detail
end

if #ARGV >= 7 then can_ack(stream, group) end
return run_entries(requeue_one, 7, 5)
