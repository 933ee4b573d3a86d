// flame_diff_test.mjs - checks a differential flame graph in headless
// Chromium.
//
//   node flame_diff_test.mjs PAGE.html SPEC.json SCREENSHOT.png
//
// SPEC, worked out from the two profiles' folded stacks:
//   { "share": { "name": [fraction of the new profile, fraction of the old], ... },
//     "grew": ["name", ...], "shrank": ["name", ...], "steady": ["name", ...] }
// Checks that each named function's frames together span its share of the
// new profile (the shape is the new one), that a function that grew is
// red and one that shrank blue, deeper for a bigger change (one whose
// share held is paler), that hovering tells the change in points, and
// that zoom and search still work.
// Prints TAP lines like tests/lib.sh.
import { ok, notok, failed, launch } from './tap.mjs';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [page_path, spec_path, shot_path] = process.argv.slice(2);
if (!page_path || !spec_path || !shot_path) {
	console.error('usage: node flame_diff_test.mjs PAGE.html SPEC.json SCREENSHOT.png');
	process.exit(2);
}
const spec = JSON.parse(readFileSync(spec_path, 'utf8'));
const TOL = 0.004;		// of the chart's width: ~5px at 1200px


// every frame of that name on screen: its width (of the chart) and colour
async function frames_named(page, name) {
	return page.evaluate((n) => {
		const chart = document.getElementById('chart');
		const cw = chart.getBoundingClientRect().width;
		return [...chart.querySelectorAll('.f')].filter((el) => el.textContent === n)
			.map((el) => {
				const [r, g, b] = getComputedStyle(el).backgroundColor.match(/\d+/g).map(Number);
				return { width: el.getBoundingClientRect().width / cw, r, g, b,
					 i: +el.getAttribute('data-i') };
			});
	}, name);
}

const browser = await launch();
try {
	const page = await browser.newPage({ viewport: { width: 1200, height: 640 } });
	const errors = [];
	page.on('pageerror', (e) => errors.push(e.message));
	page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
	await page.goto(pathToFileURL(page_path).href);
	await page.waitForSelector('#chart .f', { timeout: 10000 });
	if (errors.length)
		notok('the differential page loads without script errors', errors.join('\n'));
	else
		ok('the differential page loads without script errors');

	const meta = await page.textContent('#meta');
	if (/against .*red grew, blue shrank/.test(meta))
		ok(`the header says what is compared: "${meta.slice(0, 80)}..."`);
	else
		notok('the header says what is compared', meta);

	for (const [name, [now, was]] of Object.entries(spec.share)) {
		const fr = await frames_named(page, name);
		const width = fr.reduce((s, f) => s + f.width, 0);
		if (fr.length && Math.abs(width - now) <= TOL)
			ok(`${name} spans ${(100 * now).toFixed(1)}% of the chart, its share of the new profile (was ${(100 * was).toFixed(1)}%)`);
		else
			notok(`${name}'s width`, `expected ${now}, got ${width} over ${fr.length} frames`);
		const d = await page.evaluate((i) => window.callstitchFlame.delta(i), fr[0] ? fr[0].i : 0);
		const want = 100 * (now - was);
		if (fr.length && Math.abs(d - want) <= 0.5)
			ok(`${name} changed by ${want.toFixed(1)} points (page: ${d.toFixed(2)})`);
		else
			notok(`${name}'s change`, `expected ${want.toFixed(2)} points, page says ${d}`);
	}
	const colours = {};
	for (const [set, red] of [['grew', true], ['shrank', false]])
		for (const name of spec[set] || []) {
			const fr = await frames_named(page, name);
			const good = fr.length && fr.every((f) => red ? f.r > f.b + 40 : f.b > f.r + 40);
			colours[name] = fr[0];
			if (good)
				ok(`${name} ${set}: drawn ${red ? 'red' : 'blue'} (rgb ${fr[0].r},${fr[0].g},${fr[0].b})`);
			else
				notok(`${name} ${set}: drawn ${red ? 'red' : 'blue'}`, JSON.stringify(fr));
		}
	// the bigger change, the deeper colour: a frame whose share held is
	// paler than every one that grew or shrank
	const sat = (f) => Math.max(f.r, f.g, f.b) - Math.min(f.r, f.g, f.b);
	for (const name of spec.steady || []) {
		const fr = await frames_named(page, name);
		const deep = Object.values(colours).filter(Boolean);
		if (fr.length && deep.length && fr.every((f) => deep.every((d) => sat(f) < sat(d))))
			ok(`${name}, whose share held, is paler (rgb ${fr[0].r},${fr[0].g},${fr[0].b}) than the frames that changed`);
		else
			notok(`${name} is paler than the frames that changed`,
			      JSON.stringify({ steady: fr, changed: deep }));
	}
	const pale = await page.evaluate(() => {
		const el = [...document.querySelectorAll('#chart .f')].find((e) => e.textContent === 'all');
		return getComputedStyle(el).backgroundColor;
	});
	if (/rgb\((2[2-5]\d), \1, \1\)/.test(pale))
		ok(`the root, which cannot change, is grey (${pale})`);
	else
		notok('the root is grey', pale);

	const grew = (spec.grew || [])[0];
	if (grew) {
		const el = page.locator('#chart .f', { hasText: new RegExp(`^${grew}$`) }).first();
		await el.hover();
		const details = await page.textContent('#details');
		if (/was [0-9.]+% of all, \+[0-9.]+ points/.test(details))
			ok(`hover on ${grew} tells what it was and the change: "${details.slice(-40)}"`);
		else
			notok(`hover on ${grew} tells the change`, details);
		await el.click();
		const fr = await frames_named(page, grew);
		if (fr.length === 1 && Math.abs(fr[0].width - 1) <= TOL && fr[0].r > fr[0].b + 40)
			ok(`zoomed on ${grew}: it fills the chart and keeps its colour`);
		else
			notok(`zoom on ${grew}`, JSON.stringify(fr));
		await page.click('#reset');
		const query = Object.keys(spec.share).join('|');
		if (!(await page.isChecked('#regex')))
			await page.click('#regex');
		await page.fill('#search', `^(${query})$`);
		await page.press('#search', 'Enter');
		const share = await page.textContent('#matched');
		const sum = Object.values(spec.share).reduce((s, [now]) => s + now, 0);
		const got = parseFloat((share.match(/([0-9.]+)%/) || [])[1]);
		if (Math.abs(got - 100 * sum) <= 0.2)
			ok(`search still reports the matched share of the new profile (${share})`);
		else
			notok('search share', `expected ${(100 * sum).toFixed(1)}%, got "${share}"`);
	}
	await page.screenshot({ path: shot_path });
} finally {
	await browser.close();
}
process.exit(failed() ? 1 : 0);
