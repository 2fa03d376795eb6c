--[[
  Moves a delivery given up on to its instance's dead letters and removes it from the stream.

  Input:
    KEYS[1]  the delivery stream
    KEYS[2]  the instance's dead-letter list
    ARGV[1]  consumer group
    ARGV[2]  stream entry id
    ARGV[3]  the dead letter (JSON)
    ARGV[4]  how many dead letters an instance keeps

  Output:
    the length of the dead-letter list
]]
redis.call("LPUSH", KEYS[2], ARGV[3])
redis.call("LTRIM", KEYS[2], 0, tonumber(ARGV[4]) - 1)
redis.call("XACK", KEYS[1], ARGV[1], ARGV[2])
redis.call("XDEL", KEYS[1], ARGV[2])
return redis.call("LLEN", KEYS[2])
