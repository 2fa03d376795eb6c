--[[
  Completes deliveries taken from the stream, in one step for a batch of them.

  Input:
    KEYS[1]  the delivery stream
    ARGV[1]  consumer group
    ARGV[2..] stream entry ids

  Output:
    how many were acknowledged and removed (one not pending any more was taken over by another node)
]]
local ids = { unpack(ARGV, 2) }
local acked = redis.call("XACK", KEYS[1], ARGV[1], unpack(ids))
redis.call("XDEL", KEYS[1], unpack(ids))
return acked
