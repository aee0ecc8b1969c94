package main

import (
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/spf13/cobra"

	"github.com/metamesh/node/node"
	"github.com/metamesh/node/node/p2p"
)

func newIDCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "id",
		Short: "Print the node's peer ID (12D3KooW…)",
		Long: `Print the peer ID of the node whose data directory is --data (by default the
one metamesh run and make run use). The Ed25519 identity lives in
DATA/identity.key (mode 0600). A data directory that holds no node is an
error; --create makes the identity there when missing, so a node's ID can be
known (and given to peers as --bootstrap) before it first runs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir := dataDir(cmd)
			if create, _ := cmd.Flags().GetBool("create"); !create {
				if err := node.CheckDataDir(dir); err != nil {
					return err
				}
			}
			k, err := p2p.LoadIdentity(dir)
			if err != nil {
				return err
			}
			id, err := peer.IDFromPrivateKey(k)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), id)
			return nil
		},
	}
	dataFlag(c)
	c.Flags().Bool("create", false, "create the identity when the data directory has none")
	return c
}
