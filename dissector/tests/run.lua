-- Runs every dissector unit test under plain lua5.2:
--   cd dissector && lua5.2 tests/run.lua
package.path = "./?.lua;" .. package.path
local t = require("tests.harness")
for _, name in ipairs({ "tests.test_wire", "tests.test_core", "tests.test_tsn", "tests.test_components" }) do
  local ok, err = pcall(require, name)
  if not ok then
    t.failed = t.failed + 1
    io.stderr:write("FAIL loading " .. name .. ": " .. tostring(err) .. "\n")
  end
end
print(string.format("lua: %d passed, %d failed", t.passed, t.failed))
os.exit(t.failed == 0 and 0 or 1)
