#if os(Linux)
    import Foundation

    /// The servers the interoperability tests talk to, each started by ``ServerProcess`` for one test.
    enum Servers {
        /// `redis-server` on 127.0.0.1 with persistence off and its working directory in a temporary one.
        static func redis() async throws -> ServerProcess {
            let directory = try ServerProcess.makeDirectory(for: "redis")
            return try await ServerProcess.start("redis-server", in: directory) { port in
                [
                    "--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                    "--dir", directory.path, "--databases", "1"
                ]
            }
        }

        /// nginx in the foreground and in one process (`daemon off; master_process off;`), serving
        /// `files` (name → contents) from a temporary prefix over HTTP/1.1 with keep-alive. After
        /// `keepaliveRequests` requests on one connection nginx answers the last with
        /// `Connection: close` and closes it. With `tls` (certificate and key files), HTTPS only, TLS 1.2
        /// and 1.3, session tickets on (nginx's defaults).
        static func nginx(
            files: [String: Data], keepaliveRequests: Int = 1000, tls: (certificate: String, key: String)? = nil
        ) async throws -> ServerProcess {
            let directory = try ServerProcess.makeDirectory(for: "nginx")
            let root = directory.appendingPathComponent("html")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            for (name, contents) in files {
                try contents.write(to: root.appendingPathComponent(name))
            }
            let temp = directory.appendingPathComponent("temp")
            try FileManager.default.createDirectory(at: temp, withIntermediateDirectories: true)
            let configuration = directory.appendingPathComponent("nginx.conf")
            return try await ServerProcess.start(
                "nginx", in: directory,
                prepare: { port in
                    let text = """
                        daemon off;
                        master_process off;
                        worker_processes 1;
                        pid \(directory.path)/nginx.pid;
                        error_log \(directory.path)/server.log info;
                        events { worker_connections 64; }
                        http {
                            access_log off;
                            server_tokens off;
                            client_body_temp_path \(temp.path)/body;
                            proxy_temp_path \(temp.path)/proxy;
                            fastcgi_temp_path \(temp.path)/fastcgi;
                            scgi_temp_path \(temp.path)/scgi;
                            uwsgi_temp_path \(temp.path)/uwsgi;
                            keepalive_timeout 30s;
                            keepalive_requests \(keepaliveRequests);
                            types { text/plain txt; }
                            default_type application/octet-stream;
                            server {
                                listen 127.0.0.1:\(port)\(tls == nil ? "" : " ssl");
                                \(tls.map { "ssl_certificate \($0.certificate); ssl_certificate_key \($0.key); ssl_protocols TLSv1.2 TLSv1.3;" } ?? "")
                                root \(root.path);
                            }
                        }

                        """
                    try Data(text.utf8).write(to: configuration)
                }
            ) { _ in
                // -e: the log for errors before the configuration is read (the default is under /var/log).
                ["-p", directory.path + "/", "-c", configuration.path, "-e", directory.path + "/server.log"]
            }
        }

        /// socat listening on 127.0.0.1, forking one `peer` (a socat address such as `EXEC:cat` or
        /// `SYSTEM:…`) per connection.
        static func socat(_ peer: String) async throws -> ServerProcess {
            let directory = try ServerProcess.makeDirectory(for: "socat")
            return try await ServerProcess.start("socat", in: directory) { port in
                ["TCP-LISTEN:\(port),bind=127.0.0.1,reuseaddr,fork", peer]
            }
        }
    }
#endif
