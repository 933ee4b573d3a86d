// speedscope_test.mjs - loads a speedscope file into speedscope itself (the
// npm package's built app, served on 127.0.0.1) in headless Chromium and
// reads back what the page shows of its first profile.
//
//   node speedscope_test.mjs PROFILE.json NAME TOTAL TOP SCREENSHOT.png
//
// NAME is the profile name the toolbar must show, TOTAL the profile's
// total weight, TOP the function the sandwich view lists first (most self
// weight). The total is speedscope's own sum of the weights: the page's
// Export writes the profile back as speedscope holds it, an evented
// profile whose last frame closes at the total. Prints TAP lines like
// tests/lib.sh.
import { ok, notok, check_eq, failed, launch } from './tap.mjs';
import { createServer } from 'node:http';
import { readFileSync, existsSync } from 'node:fs';
import { dirname, extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const [profile_path, want_name, want_total, want_top, shot_path] = process.argv.slice(2);
if (!shot_path) {
	console.error('usage: node speedscope_test.mjs PROFILE.json NAME TOTAL TOP SCREENSHOT.png');
	process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const app = join(here, 'node_modules', 'speedscope', 'dist', 'release');

// the app's files, and the profile at /profile.json
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
		'.json': 'application/json', '.png': 'image/png', '.wasm': 'application/wasm',
		'.woff2': 'font/woff2', '.ico': 'image/x-icon' };
const server = createServer((req, res) => {
	const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
	const file = path === '/profile.json' ? profile_path : join(app, normalize(path));
	if (!file.startsWith(app) && file !== profile_path || !existsSync(file)) {
		res.writeHead(404);
		res.end();
		return;
	}
	res.writeHead(200, { 'Content-Type': types[extname(file)] || 'application/octet-stream' });
	res.end(readFileSync(file));
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/index.html` +
	    '#profileURL=%2Fprofile.json&view=sandwich';

const browser = await launch();
try {
	const context = await browser.newContext({ acceptDownloads: true,
						   viewport: { width: 1280, height: 800 } });
	const page = await context.newPage();
	const errors = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	page.on('dialog', (d) => { errors.push(`dialog: ${d.message()}`); d.dismiss(); });
	await page.goto(url);

	// the sandwich view's table: Total, Self, Symbol Name; rows by self
	// (the profile selector is a table too, hidden until opened)
	const first_row = page.locator('tr:has(td) >> visible=true').first();
	try {
		await first_row.waitFor({ timeout: 60000 });
		ok('speedscope loads the file and shows the sandwich view');
	} catch (e) {
		notok('speedscope loads the file and shows the sandwich view', errors.join('\n') || e);
		throw e;
	}
	if (errors.length)
		notok('no errors on the page', errors.join('\n'));
	else
		ok('no errors on the page');

	const cells = await first_row.locator('td').allInnerTexts();
	check_eq('the function with the most self weight', want_top, cells[cells.length - 1].trim());

	// the toolbar names the profile: "NAME (1/N)" with several
	const title = await page.evaluate(() => document.body.innerText);
	if (title.includes(want_name))
		ok(`the page shows the profile name: ${want_name}`);
	else
		notok('the page shows the profile name', `'${want_name}' not in the page`);

	// speedscope's own model of the profile, through its Export (Ctrl+S)
	const [download] = await Promise.all([
		page.waitForEvent('download', { timeout: 30000 }),
		page.keyboard.press('Control+s'),
	]);
	const exported = JSON.parse(readFileSync(await download.path(), 'utf8'));
	const p = exported.profiles[0];
	check_eq("speedscope's first profile", want_name, p.name);
	let end = 0;
	for (const ev of p.events)
		end = Math.max(end, ev.at);
	check_eq('its total weight (the weights speedscope summed)', want_total, end);
	check_eq('its total weight (endValue)', want_total, p.endValue);

	await page.screenshot({ path: shot_path });
} catch (e) {
	notok('the speedscope test ran', e);
} finally {
	await browser.close();
	server.close();
}
process.exit(failed() ? 1 : 0);
