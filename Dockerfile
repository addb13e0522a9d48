# Courier: build with the .NET SDK, run on the ASP.NET runtime (monitoring uses Kestrel).
FROM mcr.microsoft.com/dotnet/sdk:10.0 AS build
WORKDIR /src
COPY . .
# ReadyToRun (precompiled) for a fast start; the build's own r2r/ copy is not needed here.
RUN dotnet publish src/Gateway/Courier.Gateway.csproj -c Release -r linux-x64 --self-contained false -p:CourierReadyToRun=false -o /app

FROM mcr.microsoft.com/dotnet/aspnet:10.0
WORKDIR /app
COPY --from=build /app .
# Client port, monitoring port, route port (cluster { listen }).
EXPOSE 4222 8222 6222
VOLUME /data
ENTRYPOINT ["dotnet", "courier.dll"]
CMD ["-p", "4222", "-m", "8222", "-js", "-sd", "/data"]
