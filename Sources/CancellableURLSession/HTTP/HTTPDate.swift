import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// HTTP dates, in the three formats a recipient must accept (RFC 9110 §5.6.7).
enum HTTPDate {
    /// `Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 08:49:37 GMT`, or `Sun Nov  6 08:49:37 1994`; `nil` for
    /// anything else, and for any text with a character outside printable ASCII (CR, LF, NUL…), whatever the
    /// formatter would make of it.
    static func parse(_ text: String) -> Date? {
        guard text.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) }) else { return nil }
        let text = text.trimmingCharacters(in: .whitespaces)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE',' dd MMM yyyy HH':'mm':'ss 'GMT'", "EEEE',' dd'-'MMM'-'yy HH':'mm':'ss 'GMT'"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        formatter.dateFormat = "EEE MMM d HH':'mm':'ss yyyy"
        return formatter.date(from: text.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " "))
    }
}
