--[[
  Schedules another attempt of a delivery and removes it from the stream, in one step (a crash between
  the two could neither lose it nor send it twice at once).

  Input:
    KEYS[1]  the delivery stream
    KEYS[2]  the retry set (scored by due time, ms)
    ARGV[1]  consumer group
    ARGV[2]  stream entry id
    ARGV[3]  due time (Unix ms)
    ARGV[4]  the delivery (JSON, attempts already counted)

  Output:
    1
]]
redis.call("ZADD", KEYS[2], ARGV[3], ARGV[4])
redis.call("XACK", KEYS[1], ARGV[1], ARGV[2])
redis.call("XDEL", KEYS[1], ARGV[2])
return 1
