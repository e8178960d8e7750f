package duty

import (
	"bytes"
	"io"
	"math/big"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func bigInt(n int64) *big.Int { return big.NewInt(n) }
