-- Records in the lease index when a lease ends unless renewed, by the Redis clock (the nodes'
-- clocks may differ).
-- KEYS[1] lease index (sorted set); ARGV[1] member, ARGV[2] milliseconds from now
-- Returns the index's time now in milliseconds.
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
redis.call('ZADD', KEYS[1], now + ARGV[2], ARGV[1])
return now
