/**
 * @peculiar/x509 with the Reflect metadata polyfill its dependency injection
 * (tsyringe) needs loaded first. Import the library only through this module.
 */
import "reflect-metadata";

export * from "@peculiar/x509";
