// SPDX-License-Identifier: MIT
// HttpGet.java - GET a URL with HttpURLConnection; print the body on 200,
// exit 1 otherwise (the HTTP retry tests run it with `java HttpGet.java`).
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;

public class HttpGet {
    public static void main(String[] args) throws Exception {
        HttpURLConnection c = (HttpURLConnection) new URL(args[0]).openConnection();
        int status = c.getResponseCode();
        if (status != 200) {
            System.out.println("status " + status);
            System.exit(1);
        }
        try (InputStream in = c.getInputStream()) {
            System.out.print(new String(in.readAllBytes(), "UTF-8"));
        }
    }
}
