--[[
  Forgets where an instance's owner runs, if the hint still names this node (a newer owner's stays).

  Input:
    KEYS[1]  the owner hint of an instance (sb:owner:{instanceId})
    ARGV[1]  this node's id

  Output: 1 = forgotten, 0 = it named another node, or nothing
]]
if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("DEL", KEYS[1])
  return 1
end
return 0
