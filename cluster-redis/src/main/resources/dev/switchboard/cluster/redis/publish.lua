-- Appends one event to a conversation in one step: checks the run lease and the epoch, takes the
-- next seq, adds the entry to the bounded stream under that seq, refreshes the TTLs, publishes it.
-- KEYS[1] meta hash {epoch, seq}, KEYS[2] stream, KEYS[3] run lease
-- ARGV[1] expected epoch ('' takes any), ARGV[2] lease token ('' checks none), ARGV[3] payload,
-- ARGV[4] stream MAXLEN, ARGV[5] TTL in seconds, ARGV[6] live channel
-- Returns {0, seq, epoch} published, {1} lease lost, {2, epoch} epoch changed, {3} not open.
-- Seqs stay below 10^14: Lua numbers print as integers up to there.
if ARGV[2] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[2] then
  return {1}
end
local epoch = redis.call('HGET', KEYS[1], 'epoch')
if not epoch then
  return {3}
end
if ARGV[1] ~= '' and ARGV[1] ~= epoch then
  return {2, epoch}
end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[4], seq .. '-0', 'd', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[5])
redis.call('PUBLISH', ARGV[6], seq .. ':' .. epoch .. ':' .. ARGV[3])
return {0, seq, epoch}
