import Testing

@testable import CancellableURLSession

/// `Content-Range` as servers send it, and what is refused.
@Suite struct ContentRangeTests {
    @Test func contentRangeParsesWhatServersSendAndRejectsTheRest() {
        func fields(_ header: String) -> [Int64?]? {
            ContentRange(header).map { [$0.start, $0.end, $0.total] }
        }
        #expect(fields("bytes 100-199/1000") == [100, 199, 1000])
        #expect(fields("bytes 0-0/*") == [0, 0, nil])
        #expect(fields("bytes */1000") == [nil, nil, 1000])
        for bad in [
            "", "bytes", "bytes */*", "bytes 5-4/10", "bytes 0-10/10", "items 0-1/2", "bytes a-b/c", "bytes -1-2/3",
        ] {
            #expect(fields(bad) == nil, "\(bad)")
        }
    }
}
