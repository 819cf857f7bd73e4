package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A usage error says what is wrong, not only the synopsis: a missing
// required flag, an unknown subcommand, two keys where one is wanted.
func TestUsageErrorsSayWhatIsWrong(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"prove", "audit.jsonl"}, "prove: --line is required: the number of the line to prove, from 1"},
		{[]string{"log", "nosuch"}, `log: unknown subcommand "nosuch"`},
		{[]string{"log", "rebuild-store", "--key", "a.pub", "--signing-key", "a.key", "audit.jsonl"},
			"log rebuild-store: give --key or --signing-key, not both"},
	} {
		res := run(t, "", tc.args...)
		require.Equal(t, exitUsage, res.code, "%v", tc.args)
		require.Contains(t, res.stderr, tc.want, "%v", tc.args)
	}
}
