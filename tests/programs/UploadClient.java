// SPDX-License-Identifier: MIT
// UploadClient.java - Java uploads for test_blocking_uploads.sh:
//     java -cp DIR UploadClient MODE PORT FILE
// "stream": a blocking Socket's OutputStream.write of the whole file;
// "transfer": FileChannel.transferTo to a blocking SocketChannel
// (sendfile).  Exit 0 when every byte went (an exception exits 1).
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

public class UploadClient {
    public static void main(String[] a) throws Exception {
        InetSocketAddress addr =
            new InetSocketAddress("127.0.0.1", Integer.parseInt(a[1]));
        Path p = Path.of(a[2]);
        if (a[0].equals("transfer")) {
            try (SocketChannel s = SocketChannel.open(addr);
                 FileChannel f = FileChannel.open(p, StandardOpenOption.READ)) {
                long at = 0, n = f.size();
                while (at < n)
                    at += f.transferTo(at, n - at, s);
            }
            return;
        }
        try (Socket s = new Socket()) {
            s.connect(addr);
            OutputStream o = s.getOutputStream();
            o.write(Files.readAllBytes(p));
            o.flush();
        }
    }
}
