/**
 * Tests run in a random order within their file (vitest.config.ts, README "Tests"), so that none leans on what
 * another left behind. A suite whose tests are the steps of one story (before enrolment, a wrong code, enrolled,
 * the central down, revoked) says so with this option and keeps its written order.
 */
export const STORY = { shuffle: false } as const;
