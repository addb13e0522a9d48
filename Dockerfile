# Courier: build with the .NET SDK; the image carries its own runtime (self-contained), precompiled as
# one composite ReadyToRun image with the framework and Akka.NET, as the Release build's r2r/ copy is.
FROM mcr.microsoft.com/dotnet/sdk:10.0 AS build
WORKDIR /src
COPY . .
RUN dotnet publish src/Gateway/Courier.Gateway.csproj -c Release -r linux-x64 --self-contained true -p:PublishReadyToRunComposite=true -p:CourierReadyToRun=false -o /app

FROM mcr.microsoft.com/dotnet/runtime-deps:10.0
WORKDIR /app
COPY --from=build /app .
# Client port, monitoring port, route port (cluster { listen }).
EXPOSE 4222 8222 6222
VOLUME /data
ENTRYPOINT ["/app/courier"]
CMD ["-p", "4222", "-m", "8222", "-js", "-sd", "/data"]
