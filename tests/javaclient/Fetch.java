// Fetches URLs with the JVM's two HTTP APIs, which take the proxy from the system
// properties (here: those JAVA_TOOL_OPTIONS sets, as the JVM reads that variable at
// start-up) through the default ProxySelector. Each argument is API=URL, API being
// "urlconnection" (java.net.HttpURLConnection) or "httpclient" (java.net.http.HttpClient,
// default settings). No Authenticator is installed: no system property carries a proxy
// password. Prints the status or the error per argument. Run as a single-file source.
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

public class Fetch {
    public static void main(String[] args) {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        for (String arg : args) {
            String[] parts = arg.split("=", 2);
            try {
                int status;
                if (parts[0].equals("urlconnection")) {
                    HttpURLConnection conn =
                            (HttpURLConnection) URI.create(parts[1]).toURL().openConnection();
                    conn.setConnectTimeout(5000);
                    conn.setReadTimeout(5000);
                    status = conn.getResponseCode();
                    conn.disconnect();
                } else {
                    HttpRequest request = HttpRequest.newBuilder(URI.create(parts[1]))
                            .timeout(Duration.ofSeconds(5)).build();
                    status = client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
                }
                System.out.println(arg + " " + status);
            } catch (Exception e) {
                System.out.println(arg + " error: " + e);
            }
        }
    }
}
