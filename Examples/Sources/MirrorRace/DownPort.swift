#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback port where nothing listens, standing in for a mirror that is down: a connection to it is refused at
/// once, as by a host whose server has stopped.
///
/// The port stays bound (but not listening) while this lives, so nothing else on the machine can take it and answer.
final class DownPort: Sendable {
    let port: Int
    private let socket: Int32

    init() throws {
        #if canImport(Glibc)
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard socket >= 0 else { throw DownPortError(errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")  // port 0: the system picks a free one
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else {
            let error = DownPortError(errno: errno)
            close(socket)
            throw error
        }
        self.socket = socket
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit {
        close(socket)
    }
}

struct DownPortError: Error, CustomStringConvertible {
    let errno: Int32
    var description: String {
        "could not reserve a port for the mirror that is down: \(String(cString: strerror(errno)))"
    }
}
