// TestSupport: helpers shared by the test targets.
//
// - `DecoderVerifier` feeds a decoder the same bytes cut every way that matters and demands the same frames.
// - `SplitMix64` is a seeded random number generator, so "random" cuts are the same on every run.
