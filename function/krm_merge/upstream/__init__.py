"""Where a package's upstream versions come from (git, like ``kpt pkg get``)."""
