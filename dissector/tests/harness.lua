-- A tiny test runner for plain lua5.2: t.test(name, fn), t.eq(a, b).
local t = { passed = 0, failed = 0 }

function t.eq(a, b, what)
  if a ~= b then
    error(string.format("%sexpected %s, got %s", what and (what .. ": ") or "",
      tostring(b), tostring(a)), 2)
  end
end

function t.near(a, b, eps, what)
  if type(a) ~= "number" or math.abs(a - b) > eps then
    error(string.format("%sexpected %s ± %s, got %s", what and (what .. ": ") or "",
      tostring(b), tostring(eps), tostring(a)), 2)
  end
end

function t.test(name, fn)
  local ok, err = pcall(fn)
  if ok then
    t.passed = t.passed + 1
  else
    t.failed = t.failed + 1
    io.stderr:write("FAIL " .. name .. ": " .. tostring(err) .. "\n")
  end
end

return t
