// Asks the JVM's default ProxySelector (sun.net.spi.DefaultProxySelector) whether a
// URL goes direct, for http.nonProxyHosts values read from stdin, in one JVM.
// Each stdin line: "set<TAB>PATTERNS<TAB>URL" or "unset<TAB><TAB>URL"; each output
// line: "direct" or "proxy". Run as a single-file source: java Check.java < cases
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.Proxy;
import java.net.ProxySelector;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;

public class Check {
    public static void main(String[] args) throws Exception {
        for (String scheme : new String[] {"http", "https"}) {
            System.setProperty(scheme + ".proxyHost", "127.0.0.1");
            System.setProperty(scheme + ".proxyPort", "3128");
        }
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            String[] fields = line.split("\t", 3);
            if (fields[0].equals("set")) {
                System.setProperty("http.nonProxyHosts", fields[1]);
            } else {
                System.clearProperty("http.nonProxyHosts");
            }
            List<Proxy> chosen = ProxySelector.getDefault().select(new URI(fields[2]));
            out.append(chosen.get(0).type() == Proxy.Type.DIRECT ? "direct" : "proxy").append('\n');
        }
        System.out.print(out);
    }
}
