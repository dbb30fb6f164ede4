#if canImport(Testing)
import Testing
#endif
#if canImport(XCTest)
import XCTest
#endif

/// Where in the test a failure is reported: the call site of the PromiseTesting API that found it.
struct CallSite {
    let fileID: StaticString
    let filePath: StaticString
    let line: UInt
    let column: UInt
}

/// Fails the running test with `message`, in whichever framework runs it: Swift Testing's `Issue.record` inside
/// a Swift Testing test, `XCTFail` otherwise (a message on standard output when neither is available).
func reportTestFailure(_ message: String, at site: CallSite) {
    #if canImport(Testing)
    if Test.current != nil {
        Issue.record(
            Comment(rawValue: message),
            sourceLocation: SourceLocation(
                fileID: "\(site.fileID)",
                filePath: "\(site.filePath)",
                line: Int(site.line),
                column: Int(site.column)
            )
        )
        return
    }
    #endif
    #if canImport(XCTest)
    XCTFail(message, file: site.filePath, line: site.line)
    #else
    print("PromiseTesting: \(site.fileID):\(site.line): \(message)")
    #endif
}
