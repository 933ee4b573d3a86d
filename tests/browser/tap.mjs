// tap.mjs - what the browser drivers share: TAP lines like tests/lib.sh's,
// and Debian's chromium started headless the same way every time.
import { chromium } from 'playwright-core';

let nr_failed = 0;

export function ok(what) { console.log(`ok - ${what}`); }

export function notok(what, why) {
	nr_failed++;
	console.log(`not ok - ${what}`);
	if (why)
		for (const line of String(why).split('\n'))
			console.log(`#   ${line}`);
}

export function check_eq(what, want, got) {
	if (String(want) === String(got))
		ok(`${what}: ${got}`);
	else
		notok(what, `expected '${want}', got '${got}'`);
}

// how many notok() lines so far: the driver's exit status
export function failed() { return nr_failed; }

// $CHROMIUM or /usr/bin/chromium, headless, talking to no one
export function launch() {
	return chromium.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
		       '--no-first-run', '--disable-background-networking',
		       '--disable-component-update', '--disable-sync'],
	});
}
