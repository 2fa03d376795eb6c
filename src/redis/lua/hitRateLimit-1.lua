--[[
  Counts one request in a fixed-window bucket shared by every node.

  Input:
    KEYS[1]  the bucket's counter key (sb:rate:<bucket>)
    ARGV[1]  window length in milliseconds

  Output:
    { count after this request, milliseconds until the window resets }
]]
local count = redis.call("INCR", KEYS[1])
if count == 1 then
  redis.call("PEXPIRE", KEYS[1], ARGV[1])
end
local ttl = redis.call("PTTL", KEYS[1])
if ttl < 0 then
  -- A counter left without expiry (an interrupted first hit) must not block the bucket forever.
  redis.call("PEXPIRE", KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return { count, ttl }
