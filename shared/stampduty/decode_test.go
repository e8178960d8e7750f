package stampduty_test

import (
	"stampduty/shared/jsonobj"
	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
)

// init gives the package's own tests the edge's reading of a JSON body.
func init() {
	stampduty.DecodeFields = func(body []byte, maxDepth int) ([]stampduty.Field, error) {
		members, err := jsonobj.Members(body, maxDepth)
		return stampjson.Fields(members), err
	}
}
