// SPDX-License-Identifier: MIT
// FoClient.java - the Java client of the failover and DNS-retry tests:
// new Socket(name, port) resolves the name (getaddrinfo) and connects to
// the first address only, as most Java programs do, then sends a GET.
// Exits 0 on a 200 answer, 2 when the name does not resolve, 1 otherwise.
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;

public class FoClient {
    public static void main(String[] args) throws Exception {
        // When the JVM is up: the tests time the connect from here.
        System.out.println("start " + System.currentTimeMillis());
        try (Socket s = new Socket(args[0], Integer.parseInt(args[1]))) {
            OutputStream out = s.getOutputStream();
            out.write("GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            byte[] buf = new byte[512];
            int n = in.read(buf);
            String head = n > 0 ? new String(buf, 0, n, StandardCharsets.US_ASCII) : "";
            System.out.println("peer " + s.getInetAddress().getHostAddress());
            System.exit(head.contains(" 200 ") ? 0 : 1);
        } catch (UnknownHostException e) {
            System.out.println("lookup " + e.getMessage());
            System.exit(2);
        } catch (Exception e) {
            System.out.println("connect " + e);
            System.exit(1);
        }
    }
}
