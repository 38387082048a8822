package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newReportCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "report FILE...",
		Short: "Estimates with confidence intervals",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("report: being written")
		},
	}
}
