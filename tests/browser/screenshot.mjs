// screenshot.mjs - a PNG of a flame graph page, for docs/flame.png.
//
//   node screenshot.mjs PAGE.html OUT.png [--search TEXT] [--hover NAME]
//                       [--width PX] [--height PX]
//
// Regenerate the documentation's picture (see docs/flame.md):
//   callstitch flame -i tests/fixtures/linux-7.3.4/task-defer.data \
//       --kallsyms kallsyms --symfs symfs -o /tmp/task.html
//   node tests/browser/screenshot.mjs /tmp/task.html docs/flame.png \
//       --search read --hover spin_user
import { launch } from './tap.mjs';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : dflt;
};
const [page_path, out] = args;
if (!page_path || !out) {
	console.error('usage: node screenshot.mjs PAGE.html OUT.png [--search TEXT] [--hover NAME]');
	process.exit(2);
}
const browser = await launch();
try {
	const page = await browser.newPage({
		viewport: { width: +opt('--width', 1400), height: +opt('--height', 820) },
	});
	await page.goto(pathToFileURL(page_path).href);
	await page.waitForSelector('#chart .f');
	if (opt('--search')) {
		await page.fill('#search', opt('--search'));
		await page.press('#search', 'Enter');
	}
	if (opt('--hover')) {
		const el = page.locator('#chart .f', { hasText: opt('--hover') }).first();
		const box = await el.boundingBox();
		await page.mouse.move(box.x + Math.min(40, box.width / 2), box.y + box.height / 2);
	}
	await page.screenshot({ path: out });
} finally {
	await browser.close();
}
