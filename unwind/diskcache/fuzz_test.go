package diskcache

import (
	"encoding/binary"
	"hash/crc32"
	"reflect"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the cache file decoder, as they are
// and with a correct checksum appended (the decoding past the checksum is
// reached too): it must never panic, and a table it accepts must encode
// back to a file that decodes to the same table.
func FuzzDecode(f *testing.F) {
	head, table, sum, err := encode("b-0a1b", sampleTable(4))
	if err != nil {
		f.Fatal(err)
	}
	valid := append(append(append([]byte{}, head...), table...), sum...)
	f.Add(valid)
	f.Add(valid[:len(valid)-crcSize])
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		decode("b-0a1b", data)
		sealed := binary.LittleEndian.AppendUint32(append([]byte{}, data...), crc32.Checksum(data, castagnoli))
		tab, err := decode("b-0a1b", sealed)
		if err != nil {
			return
		}
		head, table, sum, err := encode("b-0a1b", tab)
		if err != nil {
			t.Fatalf("decoded table does not encode: %v", err)
		}
		again, err := decode("b-0a1b", append(append(head, table...), sum...))
		if err != nil || !reflect.DeepEqual(again, tab) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, again, tab)
		}
	})
}
