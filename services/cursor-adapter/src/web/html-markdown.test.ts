import { describe, expect, it } from "vitest";
import { htmlToMarkdown, textToMarkdown } from "./html-markdown.ts";

const PAGE = `<!doctype html><html><head><title> Widget
  guide </title><style>body{color:red}</style><script>alert(1)</script></head>
<body>
  <nav><a href="/home">Home</a> | <a href="/docs">Docs</a></nav>
  <main>
    <h1>Installing widgets</h1>
    <p>Run <code>npm install widget</code>, then read <a href="../api/index.html">the API</a> or <a href="#top">jump up</a>.</p>
    <img src="diagram.png" alt="Widget diagram"><img src="spacer.gif">
    <table><thead><tr><th>Option</th><th>Default</th></tr></thead><tbody><tr><td>size</td><td>3</td></tr></tbody></table>
    <pre><code>widget --size 3</code></pre>
    <form><input name="q"><button>Search</button></form>
    <ul><li>fast</li><li><del>slow</del></li></ul>
  </main>
  <footer>(c) Widgets Inc.</footer>
</body></html>`;

describe("htmlToMarkdown", () => {
  it("keeps the main content as Markdown: headings, code, tables, lists, absolute links and image alt text", () => {
    const page = htmlToMarkdown(PAGE, "https://docs.example.com/guide/install.html");
    expect(page.title).toBe("Widget guide");
    expect(page.markdown).toContain("# Installing widgets");
    expect(page.markdown).toContain("Run `npm install widget`, then read [the API](https://docs.example.com/api/index.html) or jump up.");
    expect(page.markdown).toContain("[image: Widget diagram]");
    expect(page.markdown).toMatch(/\| Option \| Default \|\n\| --- \| --- \|\n\| size \| 3 +\|/);
    expect(page.markdown).toContain("```\nwidget --size 3\n```");
    expect(page.markdown).toMatch(/-\s+fast\n-\s+~~slow~~/);
  });

  it("leaves out scripts, styles, forms, navigation outside the main content and the footer", () => {
    const page = htmlToMarkdown(PAGE, "https://docs.example.com/guide/install.html");
    for (const text of ["alert(1)", "color:red", "Search", "Home", "Widgets Inc", "spacer"]) expect(page.markdown).not.toContain(text);
  });

  it("converts the whole body when the page marks no main content", () => {
    const page = htmlToMarkdown("<p>One</p><p>Two <a href='javascript:void(0)'>click</a></p>", "http://example.com/");
    expect(page.markdown).toBe("One\n\nTwo click");
  });
});

describe("textToMarkdown", () => {
  it("indents JSON in a code block and passes other text through", () => {
    expect(textToMarkdown('{"a":[1,2]}', "application/json").markdown).toBe('```json\n{\n  "a": [\n    1,\n    2\n  ]\n}\n```');
    expect(textToMarkdown("line 1\r\n\n\n\nline 2  \n", "text/plain").markdown).toBe("line 1\n\nline 2");
  });
});
